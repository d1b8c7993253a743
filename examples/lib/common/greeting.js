// Shared by greet-en and greet-ru through `include: [examples/lib/common]`: a change here rebuilds both.
exports.greet = (word, name) => `${word}, ${name}!`;
