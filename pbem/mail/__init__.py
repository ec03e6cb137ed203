"""Orders in and reports out by email."""
