"""Placeholder until the report writer lands."""
def write(results, publish=False):
    return results["stamp"]
