"""What the tests build on: a second machine made of real parts (`namespace_host`), a sample run copied as
if another machine had made it (`another_machine`), and the tables an executed notebook displayed
(`notebook_tables`), and data/sample's machine and runs found from its records (`sample`)."""
