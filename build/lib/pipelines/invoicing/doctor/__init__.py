"""The doctor: probes what a server honours of the contract, and reports it."""
