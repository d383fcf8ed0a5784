UPDATE runs SET name = CAST(X'ff6e616d65' AS TEXT);
