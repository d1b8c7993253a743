// The Node.js runtime server lives in ../node/server.mjs (shared by nodejs20 and nodejs22); this file
// keeps the path `node runtimes/nodejs<version>/server.js` working for local runs.
import '../node/server.mjs';
