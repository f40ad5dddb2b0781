const spin = () => Promise.resolve().then(spin);
spin();
await new Promise(() => setTimeout === undefined);
