"""The exercises of chapter 5 (text generation). Edit only these files; run ``grade`` to check
them."""
