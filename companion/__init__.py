"""The application: rules, game state and store, the table service, web app and CLI."""
