try {
  await tools.echo({ s: "\ud800" });
  return "sent";
} catch (e) {
  return e.code;
}
