"""Model-supplied previews and diffs, bounded before Qt's text engine sees them."""
