// event: the JSON body ({} for none); context: method, path, query, headers, function, namespace, deadline.
exports.handle = async (event, context) => {
  const name = (event && event.name) || context.query.name || 'world';
  return { message: `${process.env.GREETING || 'Hello'}, ${name}!`, runtime: `node ${process.version}` };
};
