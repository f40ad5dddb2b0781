return 10n ** 30n;
