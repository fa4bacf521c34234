"""HTTP and pacing: the one httpx client, its token, the 10 requests/s budget shared between processes."""
