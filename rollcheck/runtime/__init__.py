"""What every command needs from the operating system: link-safe files and directories, run directories and
their locks, worker processes that die with their parent, console output and bounded user input."""
