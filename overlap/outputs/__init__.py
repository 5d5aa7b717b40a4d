"""Writers: report folders, tables for stdout, splits, cards."""
