"""report.html: an eval output folder read back and rendered as one self-contained page."""
