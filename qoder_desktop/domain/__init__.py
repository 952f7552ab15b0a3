"""Value objects on the path of one approval, and what a person chooses for a session."""
