"""sator_torch: run sator.graph files in PyTorch (the bridge grows here)."""
