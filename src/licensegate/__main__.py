from licensegate.cli import main

raise SystemExit(main())
