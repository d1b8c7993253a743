def handle(event):
    numbers = event.get("input", []) if isinstance(event, dict) else []
    return {"sum": sum(numbers), "count": len(numbers)}
