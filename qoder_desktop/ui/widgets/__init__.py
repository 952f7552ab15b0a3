"""Views the windows and dialogs are built from: lists, editors, previews, pickers."""
