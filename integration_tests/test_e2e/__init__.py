"""End-to-end scenarios on real brokers: strategy negotiation across client libraries, every
rebalance trigger, live migration recipes and a seeded chaos run (issue 4)."""
