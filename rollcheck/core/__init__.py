"""The one interface every checker shares: transition systems, protocol entries and their registry, property
declarations, configs, the state codec and fingerprints, ITF traces, exit codes and errors."""
