"""The rules of Risk as pure data and functions: board, state, orders, rules, engine, dice,
events, odds. No files, clock or printing in here."""
