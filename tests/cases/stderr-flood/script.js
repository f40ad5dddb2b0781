const line = 'x'.repeat(1000);
for (let i = 0; i < 20000; i++) console.error(line);
return 'flooded';
