TITLE = "todo"

def run(scn, args):
    scn.check("todo", False, "not written")
