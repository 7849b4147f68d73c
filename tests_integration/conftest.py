import os
import sys

# Make the sweep spec modules importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))
