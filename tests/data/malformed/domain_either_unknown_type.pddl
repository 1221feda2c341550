; Every type of (either ...) must be declared.
(define (domain delivery)
  (:requirements :strips :typing)
  (:types truck place)
  (:predicates (at ?x ?p - place))
  (:action park
    :parameters (?x - (either truck boat) ?p - place)
    :precondition (at ?x ?p)
    :effect (at ?x ?p)))
