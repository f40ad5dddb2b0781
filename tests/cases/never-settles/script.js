await new Promise(() => {});
return 1;
