UPDATE tags SET value = CAST(X'c328' AS TEXT);
