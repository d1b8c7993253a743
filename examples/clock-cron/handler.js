exports.handle = async (event) => {
  const now = new Date();
  const moscow = now.toLocaleString('en-GB', { timeZone: 'Europe/Moscow' });
  return { kind: event.kind || 'http', utc: now.toISOString(), moscow };
};
