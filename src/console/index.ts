// The web console at /funcs: see console-plugin.ts and README.md.
export { consolePlugin, LOGIN_HINT, REFRESH_MS, type ConsolePluginOptions } from './console-plugin.ts';
