let deep = 0;
for (let i = 0; i < 600; i++) deep = [deep];
try {
  await state.set("deep", deep);
  return "set";
} catch (e) {
  return e.code;
}
