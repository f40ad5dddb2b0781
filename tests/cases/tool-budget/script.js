for (let i = 0; i < 10; i++) await tools.call("echo", { i });
return "unreachable";
