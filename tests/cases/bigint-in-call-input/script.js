try {
  await tools.echo({ n: 10n ** 30n });
  return "sent";
} catch (e) {
  return e instanceof TypeError ? "TypeError" : String(e.code);
}
