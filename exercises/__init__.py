"""The six exercises of chapters 3 and 4. Edit only these files; run ``grade`` to check them."""
