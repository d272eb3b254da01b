"""Forward (``frule``) and reverse (``rrule``) differentiation rules for numpy and scipy."""
