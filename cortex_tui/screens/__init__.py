"""Screens of the operator app, one public class per module."""
