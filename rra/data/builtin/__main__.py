"""`python -m rra.data.builtin OUT_DIR`: the built-in KG and questions written out as your own data would be."""
from rra.data.builtin import main

raise SystemExit(main())
