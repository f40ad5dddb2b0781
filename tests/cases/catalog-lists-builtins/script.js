const list = await tools.list();
return list.map((t) => [t.name, t.effect, typeof t.inputSchema, typeof t.description]);
