; A tiny typed domain (type hierarchy, a constant, an either-typed predicate) for the PDDL tests.
(define (domain delivery)
  (:requirements :strips :typing)
  (:types truck - vehicle
          vehicle package - locatable
          locatable place)
  (:constants depot - place)
  (:predicates (at ?x - locatable ?p - place)
               (in ?pkg - package ?t - truck)
               (road ?from ?to - place)
               (marked ?x - (either package place)))

  (:action drive
    :parameters (?t - truck ?from ?to - place)
    :precondition (and (at ?t ?from) (road ?from ?to))
    :effect (and (at ?t ?to) (not (at ?t ?from))))

  (:action load
    :parameters (?pkg - package ?t - truck ?p - place)
    :precondition (and (at ?t ?p) (at ?pkg ?p))
    :effect (and (in ?pkg ?t) (not (at ?pkg ?p))))

  (:action unload
    :parameters (?pkg - package ?t - truck ?p - place)
    :precondition (and (at ?t ?p) (in ?pkg ?t))
    :effect (and (at ?pkg ?p) (not (in ?pkg ?t))))

  (:action mark-depot
    :parameters ()
    :precondition (and)
    :effect (marked depot)))
