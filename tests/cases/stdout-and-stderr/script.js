console.log("to stdout");
console.error("to stderr");
return "printed";
