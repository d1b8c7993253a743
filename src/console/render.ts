// The console's HTML: Eta templates from ./templates (compiled once, cached), escaping every
// interpolation by default; only whole rendered parts (the layout's body, includes) go in raw.
import path from 'node:path';
import { Eta } from 'eta';
import { codeDir } from '../package-root.ts';

export const TEMPLATES_DIR = path.join(codeDir, 'console', 'templates');

export type PageName = 'functions' | 'function' | 'source' | 'repositories' | 'login' | 'error' | 'logs' | 'invoke' | 'charts';

/** What the layout needs on every page. */
export interface LayoutData {
  readonly title: string;
  readonly ns?: string;
  readonly nav?: 'functions' | 'repositories';
  /** `readOnly`: why this token may read the namespace but change nothing there (a tenant in its own preview); its forms are not shown. */
  readonly session?: { readonly admin: boolean; readonly csrf: string; readonly readOnly?: string };
  /** How often the page refreshes its live parts; absent for pages that do not. */
  readonly refreshMs?: number;
}

export type Render = (page: PageName, data: LayoutData & Record<string, unknown>) => string;

export function createRenderer(): Render {
  const eta = new Eta({ views: TEMPLATES_DIR, cache: true, autoEscape: true, autoTrim: [false, 'nl'] });
  return (page, data) => eta.render(`./${page}`, data);
}
