from pagezero.cli import main

raise SystemExit(main())
