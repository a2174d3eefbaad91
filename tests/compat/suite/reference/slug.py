import re


def slugify(text):
    """Lower-case words joined by single hyphens; punctuation dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("-", " "))
    return "-".join(words)
