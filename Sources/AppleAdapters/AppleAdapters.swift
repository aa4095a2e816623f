// Work in progress: Apple adapters, compiled only on Apple platforms.
