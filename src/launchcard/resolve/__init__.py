"""launchcard.resolve placeholder"""
