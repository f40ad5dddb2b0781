let errors = 0;
for (let i = 0; i < 10; i++) { try { await tools.call("echo", { i }); } catch (e) { errors++; } }
return errors;
