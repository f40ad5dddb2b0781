const fine = 1;
return 1 +;
