import os
import sys

import humanize


def handle(event, context):
    name = (event.get("name") if isinstance(event, dict) else None) or context["query"].get("name") or "world"
    size = len(str(event))
    return {
        "message": f"{os.environ.get('GREETING', 'Hello')}, {name}!",
        "event_size": humanize.naturalsize(size),
        "runtime": f"python {sys.version.split()[0]}",
    }
