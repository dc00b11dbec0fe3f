"""The table service: joins camera, vision, rules, store and outputs (see table.py)."""
