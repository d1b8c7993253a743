// CommonJS: the Node runtime loads a function folder without package.json as CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { greet } = require('./examples/lib/common/greeting.js');

exports.handle = async (event, context) => greet(process.env.WORD, (event && event.name) || context.query.name || 'world');
