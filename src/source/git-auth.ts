// Credentials for git over HTTP: from the repository's Secret (`GitAuth`) or from the clone URL
// itself (`https://user:token@host/...`), which is then used without them and never logged.
import { GitSourceError, redactUrl } from './git-source-error.ts';

export type GitAuth = { readonly token: string } | { readonly username: string; readonly password: string };

/** The Authorization header for git over HTTP: basic auth, tokens as the password (GitHub, Gitea, GitLab accept that). */
export function authorizationHeader(auth: GitAuth | undefined): string | undefined {
  if (!auth) return undefined;
  const [user, pass] = 'token' in auth ? ['x-access-token', auth.token] : [auth.username, auth.password];
  return `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
}

/** The URL without credentials, and the credentials it held. Throws GitSourceError for a URL that is not http(s). */
export function splitCredentials(url: string): { url: string; auth?: GitAuth } {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    throw new GitSourceError(
      'not-git',
      `"${redactUrl(url)}" is not a valid URL; give the repository's http(s) clone URL`,
      { cause: err },
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new GitSourceError(
      'not-git',
      `${redactUrl(url)}: only http:// and https:// git URLs are supported`,
    );
  }
  if (!u.username && !u.password) return { url };
  const auth = { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  u.username = '';
  u.password = '';
  return { url: u.toString(), auth };
}
