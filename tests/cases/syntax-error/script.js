return 1 +;
